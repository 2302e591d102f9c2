//! The guided steps: the UDCG seed's own demonstrations (Trappolini et al. 2025, "Redefining
//! Retrieval Evaluation in the Era of LLMs", arXiv 2510.21440), each loading one context.

use super::state::BuilderAction;
use yew::prelude::*;

/// The example question of the made-up contexts (from the bundled NQ subset, question 0).
pub const QUESTION: &str = "who got the first nobel prize in physics";

/// A relevant passage with utility 0.9 (p(NO-RESPONSE) = 0.1).
const GOLD: f64 = 0.1;
/// Weak distractors: distracting effect 0.1 (the paper's DE < 0.2).
const WEAK: f64 = 0.9;
/// Hard distractors: distracting effect 0.9 (the paper's DE > 0.8).
const HARD: f64 = 0.1;

fn ctx(items: &[(bool, f64, &str)]) -> Vec<(bool, f64, String, String)> {
    items
        .iter()
        .map(|(r, p, t)| (*r, *p, t.to_string(), String::new()))
        .collect()
}

fn load(k: usize, items: &[(bool, f64, &str)], why: &str) -> BuilderAction {
    BuilderAction::Load {
        question: QUESTION.into(),
        k,
        passages: ctx(items),
        source: None,
        why: why.into(),
    }
}

/// The page's first context: one relevant passage first, four weak distractors.
pub fn weak() -> BuilderAction {
    load(
        5,
        &[
            (true, GOLD, "The answer: Wilhelm Röntgen, 1901"),
            (false, WEAK, "Weak distractor: Nobel Prize in Chemistry"),
            (false, WEAK, "Weak distractor: physics textbooks"),
            (false, WEAK, "Weak distractor: Swedish Academy"),
            (false, WEAK, "Weak distractor: X-ray machines today"),
        ],
        "Table 1: weak distractors",
    )
}

fn hard() -> BuilderAction {
    load(
        5,
        &[
            (true, GOLD, "The answer: Wilhelm Röntgen, 1901"),
            (
                false,
                HARD,
                "Hard distractor: first Nobel Prize in Chemistry (van 't Hoff)",
            ),
            (
                false,
                HARD,
                "Hard distractor: first Nobel Peace Prize (Dunant, Passy)",
            ),
            (
                false,
                HARD,
                "Hard distractor: youngest physics laureate (Bragg)",
            ),
            (
                false,
                HARD,
                "Hard distractor: first Nobel Prize in Literature",
            ),
        ],
        "Table 1: hard distractors",
    )
}

fn relevant_at(position: usize) -> BuilderAction {
    let mut items = vec![
        (false, WEAK, "Weak distractor: Nobel Prize in Chemistry"),
        (false, WEAK, "Weak distractor: physics textbooks"),
        (false, WEAK, "Weak distractor: Swedish Academy"),
        (false, WEAK, "Weak distractor: X-ray machines today"),
    ];
    items.insert(position, (true, GOLD, "The answer: Wilhelm Röntgen, 1901"));
    load(5, &items, &format!("relevant at {}", position + 1))
}

fn missing() -> BuilderAction {
    load(
        5,
        &[
            (true, GOLD, "The answer: Wilhelm Röntgen, 1901"),
            (false, WEAK, "Weak distractor: Nobel Prize in Chemistry"),
            (false, WEAK, "Weak distractor: physics textbooks"),
            (false, WEAK, "Weak distractor: Swedish Academy"),
        ],
        "one passage missing",
    )
}

fn one_hard() -> BuilderAction {
    load(
        5,
        &[
            (true, GOLD, "The answer: Wilhelm Röntgen, 1901"),
            (false, WEAK, "Weak distractor: Nobel Prize in Chemistry"),
            (false, WEAK, "Weak distractor: physics textbooks"),
            (false, WEAK, "Weak distractor: Swedish Academy"),
            (
                false,
                HARD,
                "Hard distractor: first Nobel Prize in Chemistry (van 't Hoff)",
            ),
        ],
        "a hard distractor instead",
    )
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub dispatch: Callback<BuilderAction>,
}

#[function_component(GuidedSteps)]
pub fn guided_steps(props: &Props) -> Html {
    let go = |a: BuilderAction| {
        let d = props.dispatch.clone();
        Callback::from(move |_| d.emit(a.clone()))
    };
    html! {
        <section class="steps" aria-labelledby="steps-title">
            <h3 id="steps-title">{ "The story, in three steps" }</h3>
            <ol>
                <li>
                    <h4>{ "Weak vs hard distractors (the seed's Table 1)" }</h4>
                    <p>{ "One relevant passage with four irrelevant ones. Whether the distractors are weak (distracting effect DE < 0.2) or hard (DE > 0.8), nDCG, MAP, MRR and P are the same: they only see relevance labels. The reader does not: the seed reports answer accuracy apart by up to 9 points between the two kinds of context (Trappolini et al. 2025, §2 and Table 1). UDCG sees the difference." }</p>
                    <button class="ghost" id="step-weak" onclick={go(weak())}>{ "Four weak distractors" }</button>
                    { " " }
                    <button class="ghost" id="step-hard" onclick={go(hard())}>{ "Four hard distractors" }</button>
                </li>
                <li>
                    <h4>{ "Moving the relevant passage" }</h4>
                    <p>{ "Move the relevant passage down the context (drag it, or press its ↓ button). nDCG, MAP and MRR fall at every step and P stays flat; UDCG does not change, since an LLM reads the whole context. In the seed's Figure 1 (Qwen 7B, 500 questions from PopQA, NQ and TriviaQA) the reader's accuracy is U-shaped in the position — the lost-in-the-middle effect — which neither kind of metric follows; the seed's §7 finds positional weights (UDCGθ) barely help, as positional bias is marginal in real retrieval." }</p>
                    { for (0..5).map(|i| html! {
                        <>
                            <button class="ghost small" id={format!("step-at-{}", i + 1)} onclick={go(relevant_at(i))}>{ format!("relevant at {}", i + 1) }</button>
                            { " " }
                        </>
                    }) }
                </li>
                <li>
                    <h4>{ "A hard distractor is worse than no passage" }</h4>
                    <p>{ "Compare a context with an empty slot to the same context with a hard distractor in that slot. Every classical metric scores them the same (the added passage is irrelevant and comes after the relevant one); UDCG scores the hard distractor lower than the missing passage, because a distracting passage pushes the reader to a wrong answer instead of an abstention (the seed's utility, §4)." }</p>
                    <button class="ghost" id="step-missing" onclick={go(missing())}>{ "One passage missing" }</button>
                    { " " }
                    <button class="ghost" id="step-one-hard" onclick={go(one_hard())}>{ "A hard distractor instead" }</button>
                </li>
            </ol>
        </section>
    }
}
