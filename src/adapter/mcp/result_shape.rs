//! Shape rules every MCP result shares: a result is a JSON object, and a modern result says
//! whether it is complete (`resultType`).

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::failure::McpError;
use crate::result::reason::Malformed;

/// Parses a result that must be a JSON object.
pub fn object(result: &RawValue) -> Result<Map<String, Value>, McpError> {
    serde_json::from_str(result.get())
        .map_err(|_| McpError::Malformed(Malformed::Result("result is not an object")))
}

/// The `resultType` rule for every modern result: missing or `complete` is complete,
/// `input_required` is inconclusive (never continued), anything else is malformed.
pub fn check_result_type(result: &Map<String, Value>) -> Result<(), McpError> {
    match result.get("resultType") {
        None => Ok(()),
        Some(Value::String(s)) if s == "complete" => Ok(()),
        Some(Value::String(s)) if s == "input_required" => Err(McpError::Input),
        Some(_) => Err(McpError::Malformed(Malformed::Result(
            "unknown result type",
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("test json")
    }

    #[test]
    fn results_are_objects_and_say_whether_they_are_complete() {
        assert!(object(&raw("[]")).is_err());
        let complete = object(&raw(r#"{"resultType":"complete"}"#)).expect("object");
        assert_eq!(check_result_type(&complete), Ok(()));
        let missing = object(&raw("{}")).expect("object");
        assert_eq!(check_result_type(&missing), Ok(()));
        let input = object(&raw(r#"{"resultType":"input_required"}"#)).expect("object");
        assert_eq!(check_result_type(&input), Err(McpError::Input));
        let other = object(&raw(r#"{"resultType":1}"#)).expect("object");
        assert_eq!(
            check_result_type(&other),
            Err(McpError::Malformed(Malformed::Result(
                "unknown result type"
            )))
        );
    }
}
