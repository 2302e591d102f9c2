pub mod use_judge_effects;
pub mod use_route;
