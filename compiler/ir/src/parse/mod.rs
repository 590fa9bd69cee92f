//! The parser of the IR text form.

#[derive(Debug)]
pub struct ParseError;
pub fn parse(_: &str) -> Result<crate::Module, ParseError> {
    Err(ParseError)
}
