pub struct NoResponseScorer;
pub struct PromptTemplate;
