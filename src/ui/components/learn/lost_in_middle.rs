//! `#/learn/lost-in-the-middle`: not built yet; says so and what it will do.

use yew::prelude::*;

#[function_component(LostInTheMiddle)]
pub fn lost_in_the_middle() -> Html {
    html! {
        <section class="learn-page" aria-labelledby="litm-title">
            <h2 id="litm-title">{ "Lost in the middle" }</h2>
            <p class="placeholder">{ "Not yet. This page will run the lost-in-the-middle experiment (Liu et al., TACL 2024) on your machine: one relevant passage moved through a context of distractors, answer accuracy and p(NO-RESPONSE) per position with a local model, beside nDCG, MAP, MRR, P and UDCG of the same contexts, and the paper's published curves for reference." }</p>
            <p>{ "Until then, the " }<a href="#/learn/udcg-vs-ndcg">{ "UDCG vs nDCG" }</a>{ " page shows what moving the relevant passage does to each metric." }</p>
        </section>
    }
}
