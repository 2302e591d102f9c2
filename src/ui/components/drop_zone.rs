//! Where files come in: a file picker and a drag-and-drop target.

use wasm_bindgen::JsCast;
use web_sys::{DragEvent, FileList, HtmlInputElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_files: Callback<Vec<web_sys::File>>,
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

    html! {
        <section
            class={classes!("drop-zone", (*hovering).then_some("hovering"))}
            ondrop={on_drop}
            ondragover={on_drag_over}
            ondragleave={on_drag_leave}
            aria-label="Load files"
        >
            <p>{ "Drop TREC runs and a qrels file here, or " }
                <label class="button">
                    { "choose files" }
                    <input id="file-input" type="file" multiple=true onchange={on_change} />
                </label>
            </p>
            <p class="hint">{ "Formats are detected from the content. Nothing is uploaded anywhere." }</p>
        </section>
    }
}
