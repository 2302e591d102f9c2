//! The loaded files with their detected kind and a summary.

use crate::ui::state::{FileStatus, LoadedFile};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub files: Vec<LoadedFile>,
    pub on_remove: Callback<u32>,
}

#[function_component(FileList)]
pub fn file_list(props: &Props) -> Html {
    let loaded: Vec<&LoadedFile> = props
        .files
        .iter()
        .filter(|f| matches!(f.status, FileStatus::Loaded { .. }))
        .collect();
    if loaded.is_empty() {
        return html! {};
    }
    html! {
        <ul class="file-list" aria-label="Loaded files">
            { for loaded.iter().map(|f| {
                let id = f.id;
                let on_remove = props.on_remove.clone();
                let FileStatus::Loaded { kind, summary } = &f.status else { return html! {} };
                let badge = kind.label();
                html! {
                    <li key={id} class="file" data-file={f.name.clone()} data-kind={badge}>
                        <span class={classes!("badge", badge)}>{ badge }</span>
                        <span class="file-name">{ &f.name }</span>
                        <span class="file-detail">{ summary }</span>
                        <button class="remove" aria-label={format!("Remove {}", f.name)}
                            onclick={Callback::from(move |_| on_remove.emit(id))}>{ "Remove" }</button>
                    </li>
                }
            }) }
        </ul>
    }
}
