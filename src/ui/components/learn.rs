//! `#/learn/...`: the teaching pages (UDCG vs nDCG, lost in the middle) are not built yet.

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LearnProps {
    /// What follows `#/learn/`.
    pub page: String,
}

#[function_component(LearnPage)]
pub fn learn_page(props: &LearnProps) -> Html {
    html! {
        <section class="learn" aria-labelledby="learn-title">
            <h2 id="learn-title">{ "Learn" }</h2>
            <p class="placeholder">
                { "Coming soon: interactive pages on UDCG vs nDCG and on the lost-in-the-middle effect." }
            </p>
            if !props.page.is_empty() {
                <p class="hint">{ format!("The page “{}” does not exist yet.", props.page) }</p>
            }
            <p><a href="#/">{ "Back to Evaluate" }</a></p>
        </section>
    }
}
