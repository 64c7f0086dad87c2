//! The structured-output modes a perception call can ask for, strongest first, and their
//! order; what a provider has learned of them is [`crate::structured`]'s.

geppetto_wire_enum::wire_enum! {
    /// How a perception call asks for JSON, strongest first.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum StructuredMode {
        /// `response_format: {type: "json_schema"}` with the closed candidate schema.
        JsonSchema = "json_schema",
        /// `response_format: {type: "json_object"}`: valid JSON of any shape.
        JsonObject = "json_object",
        /// No `response_format`: the JSON is extracted from whatever text comes back.
        Text = "text",
    }
}

impl StructuredMode {
    /// The next weaker mode, `None` after plain text.
    #[must_use]
    pub fn weaker(self) -> Option<Self> {
        match self {
            StructuredMode::JsonSchema => Some(StructuredMode::JsonObject),
            StructuredMode::JsonObject => Some(StructuredMode::Text),
            StructuredMode::Text => None,
        }
    }

    /// The gauge value: 2 `json_schema`, 1 `json_object`, 0 text.
    #[must_use]
    pub fn metric_value(self) -> f64 {
        f64::from(self.code())
    }

    /// Strength: 2 `json_schema`, 1 `json_object`, 0 text.
    pub(crate) fn code(self) -> u8 {
        match self {
            StructuredMode::JsonSchema => 2,
            StructuredMode::JsonObject => 1,
            StructuredMode::Text => 0,
        }
    }

    pub(super) fn from_code(code: u8) -> Self {
        match code {
            2 => StructuredMode::JsonSchema,
            1 => StructuredMode::JsonObject,
            _ => StructuredMode::Text,
        }
    }
}
