//! What the Judges panel does outside its reducer: keep or restore an API key (only when the
//! user opted in), and load a finished job's result (qrels, nuggets, assignments, pairwise
//! games) like any other file, so the Evaluate, Answers and Tournament views show it at once.

use crate::ui::judge_keys;
use crate::ui::judges_state::{JudgeAction, JudgeState};
use yew::platform::spawn_local;
use yew::prelude::*;

/// `on_result(name, text)` is called once per finished job that judged something.
#[hook]
pub fn use_judge_effects(
    judges: &UseReducerHandle<JudgeState>,
    on_result: Callback<(String, String)>,
) {
    let form = &judges.form;
    // A key kept on this device for the chosen provider fills an empty key field.
    {
        let dispatch = judges.dispatcher();
        use_effect_with(form.provider, move |provider| {
            let provider = *provider;
            spawn_local(async move {
                if let Some(key) = judge_keys::load(provider).await {
                    dispatch.dispatch(JudgeAction::KeyRestored(key));
                }
            });
        });
    }
    // Opted in: keep the key as typed (unticking removes it: see the Judges page).
    use_effect_with(
        (form.remember_key, form.provider, form.key.clone()),
        |(remember, provider, key)| {
            let (provider, key) = (*provider, key.trim().to_string());
            if *remember && !key.is_empty() {
                spawn_local(async move {
                    let _ = judge_keys::save(provider, &key).await;
                });
            }
        },
    );
    // Every task's result is loaded for its view (pointwise grades and citations: Answers).
    let outcome = judges
        .job
        .as_ref()
        .filter(|j| j.spec.task().result_is_loaded())
        .and_then(|j| j.outcome.clone())
        .filter(|o| o.judged > 0 && !o.qrels.trim().is_empty());
    use_effect_with(outcome.as_ref().map(|o| o.job), move |_| {
        if let Some(o) = outcome {
            // Utilities: the exact values as a utilities TSV (the download keeps the bounds).
            let (name, text) = o.view.clone().unwrap_or((o.name.clone(), o.qrels.clone()));
            if !text.trim().is_empty() {
                on_result.emit((name, text));
            }
        }
    });
}
