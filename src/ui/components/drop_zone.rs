//! Where files come in: a file picker, drag-and-drop, and paste (files or text).

use wasm_bindgen::JsCast;
use web_sys::{ClipboardEvent, DragEvent, FileList, HtmlInputElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_files: Callback<Vec<web_sys::File>>,
    /// Pasted text, loaded as a file of its own.
    pub on_paste: Callback<String>,
}

fn files_of(list: Option<FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

#[function_component(DropZone)]
pub fn drop_zone(props: &Props) -> Html {
    let hovering = use_state(|| false);

    let on_change = {
        let on_files = props.on_files.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            {
                on_files.emit(files_of(input.files()));
                // Allow picking the same file again after fixing it.
                input.set_value("");
            }
        })
    };
    let on_drop = {
        let on_files = props.on_files.clone();
        let hovering = hovering.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(false);
            on_files.emit(files_of(e.data_transfer().and_then(|d| d.files())));
        })
    };
    let on_drag_over = {
        let hovering = hovering.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(true);
        })
    };
    let on_drag_leave = {
        let hovering = hovering.clone();
        Callback::from(move |_: DragEvent| hovering.set(false))
    };
    // Paste anywhere in the drop zone (it is focusable): files first, else the text.
    let on_paste = {
        let on_files = props.on_files.clone();
        let on_text = props.on_paste.clone();
        Callback::from(move |e: Event| {
            let Ok(e) = e.dyn_into::<ClipboardEvent>() else {
                return;
            };
            let Some(data) = e.clipboard_data() else {
                return;
            };
            e.prevent_default();
            let files = files_of(data.files());
            if !files.is_empty() {
                on_files.emit(files);
            } else if let Ok(text) = data.get_data("text/plain") {
                if !text.trim().is_empty() {
                    on_text.emit(text);
                }
            }
        })
    };

    html! {
        <section
            class={classes!("drop-zone", (*hovering).then_some("hovering"))}
            ondrop={on_drop}
            ondragover={on_drag_over}
            ondragleave={on_drag_leave}
            onpaste={on_paste}
            tabindex="0"
            aria-label="Load files: drop them here, choose them, or paste their text"
        >
            <p class="drop-title">{ "Drop runs, qrels and RAG files here, or " }
                <label class="button" for="file-input">{ "choose files" }</label>
                <input id="file-input" class="visually-hidden" type="file" multiple=true onchange={on_change} />
            </p>
            <p class="hint">
                { "…or click here and paste (Ctrl/⌘+V). TREC runs, qrels, utilities TSV, UDCG JSON, context-set JSONL, and topics TSV and passages JSONL (for the judges) are detected from their content. Nothing is uploaded." }
            </p>
        </section>
    }
}
