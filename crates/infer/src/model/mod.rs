pub struct Model;
pub struct ModelConfig;
pub struct PrefillOutput;
