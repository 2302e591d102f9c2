//! Bytes read per file being loaded and queries evaluated, each with a cancel button.

use crate::ui::state::{FileStatus, LoadedFile};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub files: Vec<LoadedFile>,
    /// (generation, queries done, total) of the evaluation in flight.
    pub evaluation: Option<(u32, usize, usize)>,
    pub on_cancel_file: Callback<u32>,
    pub on_cancel_eval: Callback<()>,
}

/// `12.3 MB` style sizes.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.2} GB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.0} kB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

#[function_component(ProgressPanel)]
pub fn progress_panel(props: &Props) -> Html {
    let loading: Vec<&LoadedFile> = props
        .files
        .iter()
        .filter(|f| matches!(f.status, FileStatus::Reading { .. }))
        .collect();
    if loading.is_empty() && props.evaluation.is_none() {
        return html! {};
    }
    html! {
        <section class="progress-panel" aria-live="polite" aria-label="Progress">
            { for loading.iter().map(|f| {
                let FileStatus::Reading { bytes, size } = f.status else { return html! {} };
                let id = f.id;
                let cancel = props.on_cancel_file.clone();
                let label = if size > 0 {
                    format!("{} of {}", human_bytes(bytes), human_bytes(size))
                } else {
                    human_bytes(bytes)
                };
                html! {
                    <div class="progress-row" data-loading={f.name.clone()}>
                        <span class="progress-name">{ format!("Reading {}", f.name) }</span>
                        <progress max={size.max(1).to_string()} value={bytes.min(size.max(1)).to_string()}
                            aria-label={format!("Bytes of {} read", f.name)}></progress>
                        <span class="progress-text">{ label }</span>
                        <button class="ghost" onclick={Callback::from(move |_| cancel.emit(id))}
                            aria-label={format!("Cancel loading {}", f.name)}>{ "Cancel" }</button>
                    </div>
                }
            }) }
            { if let Some((_, done, total)) = props.evaluation {
                let cancel = props.on_cancel_eval.clone();
                html! {
                    <div class="progress-row" id="eval-progress">
                        <span class="progress-name">{ "Evaluating" }</span>
                        <progress max={total.max(1).to_string()} value={done.to_string()}
                            aria-label="Queries evaluated"></progress>
                        <span class="progress-text">{ format!("{done} of {total} queries") }</span>
                        <button class="ghost" onclick={Callback::from(move |_| cancel.emit(()))}>{ "Cancel" }</button>
                    </div>
                }
            } else { html! {} } }
        </section>
    }
}
