//! GGUF metadata values (all 13 KV types).

/// One metadata value. Arrays keep their element type even when empty.
#[derive(Debug, Clone, PartialEq)]
pub enum MetadataValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Vec<MetadataValue>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl MetadataValue {
    pub fn type_name(&self) -> &'static str {
        match self {
            MetadataValue::U8(_) => "u8",
            MetadataValue::I8(_) => "i8",
            MetadataValue::U16(_) => "u16",
            MetadataValue::I16(_) => "i16",
            MetadataValue::U32(_) => "u32",
            MetadataValue::I32(_) => "i32",
            MetadataValue::F32(_) => "f32",
            MetadataValue::Bool(_) => "bool",
            MetadataValue::String(_) => "string",
            MetadataValue::Array(_) => "array",
            MetadataValue::U64(_) => "u64",
            MetadataValue::I64(_) => "i64",
            MetadataValue::F64(_) => "f64",
        }
    }

    /// Any integer type as u64 (negative values are rejected).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            MetadataValue::U8(v) => Some(v as u64),
            MetadataValue::U16(v) => Some(v as u64),
            MetadataValue::U32(v) => Some(v as u64),
            MetadataValue::U64(v) => Some(v),
            MetadataValue::I8(v) => u64::try_from(v).ok(),
            MetadataValue::I16(v) => u64::try_from(v).ok(),
            MetadataValue::I32(v) => u64::try_from(v).ok(),
            MetadataValue::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            MetadataValue::U8(v) => Some(v as i64),
            MetadataValue::U16(v) => Some(v as i64),
            MetadataValue::U32(v) => Some(v as i64),
            MetadataValue::U64(v) => i64::try_from(v).ok(),
            MetadataValue::I8(v) => Some(v as i64),
            MetadataValue::I16(v) => Some(v as i64),
            MetadataValue::I32(v) => Some(v as i64),
            MetadataValue::I64(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            MetadataValue::F32(v) => Some(v as f64),
            MetadataValue::F64(v) => Some(v),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            MetadataValue::Bool(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            MetadataValue::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[MetadataValue]> {
        match self {
            MetadataValue::Array(a) => Some(a),
            _ => None,
        }
    }
}
