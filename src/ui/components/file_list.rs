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
    if props.files.is_empty() {
        return html! {};
    }
    html! {
        <ul class="file-list" aria-label="Loaded files">
            { for props.files.iter().map(|f| {
                let id = f.id;
                let on_remove = props.on_remove.clone();
                let (badge, detail) = match &f.status {
                    FileStatus::Reading => ("reading".to_string(), String::new()),
                    FileStatus::Parsing => ("parsing".to_string(), String::new()),
                    FileStatus::Loaded { kind, summary } => (kind.label().to_string(), summary.clone()),
                };
                html! {
                    <li key={id} class="file" data-file={f.name.clone()} data-kind={badge.clone()}>
                        <span class={classes!("badge", badge.clone())}>{ badge }</span>
                        <span class="file-name">{ &f.name }</span>
                        <span class="file-detail">{ detail }</span>
                        <button class="remove" aria-label={format!("Remove {}", f.name)}
                            onclick={Callback::from(move |_| on_remove.emit(id))}>{ "remove" }</button>
                    </li>
                }
            }) }
        </ul>
    }
}
