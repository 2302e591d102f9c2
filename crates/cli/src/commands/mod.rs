pub mod utility;
