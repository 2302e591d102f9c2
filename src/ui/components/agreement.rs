//! Agreement view: two qrels files (e.g. UMBRELA grades against human qrels) compared item by
//! item — Cohen's κ, weighted κ, Krippendorff's α and the confusion matrix.

use crate::export::TableFormat;
use crate::export_tournament;
use crate::ui::download;
use ragscope_protocol::Report;
use std::collections::BTreeSet;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

#[function_component(AgreementView)]
pub fn agreement_view(props: &Props) -> Html {
    let Some(a) = &props.report.agreement else {
        return html! {
            <section class="agreement">
                <div class="placeholder">
                    <p>{ "Load two qrels files of the same topics (for example UMBRELA grades and human judgments): the newer one scores the runs, and the two are compared here." }</p>
                    <p class="hint">{ "For run rankings (Kendall τ between two per-topic score files) use the CLI: ragscope agreement A B --kind runs." }</p>
                </div>
            </section>
        };
    };
    let export_button = |format: TableFormat| {
        let a = a.clone();
        let onclick = Callback::from(move |_| {
            download::save_text(
                &format!("ragscope-agreement.{}", format.extension()),
                format.mime(),
                &export_tournament::agreement(&a, format),
            )
        });
        html! { <button class="ghost small" id={format!("export-agreement-{}", format.extension())} {onclick}>{ format.label() }</button> }
    };
    let labels_a: BTreeSet<i64> = a.confusion.iter().map(|c| c.0).collect();
    let labels_b: BTreeSet<i64> = a.confusion.iter().map(|c| c.1).collect();
    let count = |x: i64, y: i64| {
        a.confusion
            .iter()
            .find(|c| c.0 == x && c.1 == y)
            .map_or(0, |c| c.2)
    };
    html! {
        <section class="agreement">
            <div class="section-head">
                <h2>{ format!("Agreement — {} against {} ({})", a.a, a.b, a.kind) }</h2>
                <div class="exports" role="group" aria-label="Export the agreement table">
                    <span class="hint">{ "Export" }</span>
                    { for TableFormat::ALL.iter().map(|f| export_button(*f)) }
                </div>
            </div>
            <div class="table-wrap">
            <table class="compact" id="agreement">
                <thead><tr>
                    <th scope="col">{ "statistic" }</th>
                    <th scope="col" class="num">{ "value" }</th>
                    <th scope="col" class="num">{ "items" }</th>
                </tr></thead>
                <tbody>
                { for a.rows.iter().map(|r| html! {
                    <tr data-statistic={r.statistic.clone()} data-value={r.value.map(|v| v.to_string()).unwrap_or_default()}>
                        <th scope="row">{ &r.statistic }</th>
                        <td class="num">{ r.value.map_or("n/a".into(), |v| format!("{v:.4}")) }</td>
                        <td class="num">{ r.items }</td>
                    </tr>
                }) }
                </tbody>
            </table>
            </div>
            if a.only_a + a.only_b > 0 {
                <p class="hint">{ format!("Left out: {} items judged only in {}, {} only in {}.", a.only_a, a.a, a.only_b, a.b) }</p>
            }
            <div class="table-wrap">
            <table class="compact confusion" id="confusion">
                <caption>{ format!("Items by label: rows {}, columns {}", a.a, a.b) }</caption>
                <thead><tr>
                    <th scope="col"></th>
                    { for labels_b.iter().map(|y| html! { <th scope="col" class="num">{ y }</th> }) }
                </tr></thead>
                <tbody>
                { for labels_a.iter().map(|x| html! {
                    <tr>
                        <th scope="row">{ x }</th>
                        { for labels_b.iter().map(|y| html! {
                            <td class={classes!("num", (x == y).then_some("best"))}>{ count(*x, *y) }</td>
                        }) }
                    </tr>
                }) }
                </tbody>
            </table>
            </div>
            <p class="hint">{ "κ: Cohen 1960; weighted κ: Cohen 1968 with |g − h| (linear) or (g − h)² (quadratic) disagreement weights; α: Krippendorff 2011. Checked against scikit-learn and the krippendorff package." }</p>
        </section>
    }
}
