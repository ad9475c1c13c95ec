//! Machinery that more than one detector uses, in modules named for what they do. A
//! detector module imports from these (and from `crate::scan`, `crate::detector`, …), never
//! from another detector's module, so each detector module holds only its own format.

pub(crate) mod call_value;
pub(crate) mod construct_end;
pub(crate) mod deepseek_tokens;
pub(crate) mod end_tokens;
pub(crate) mod json_after_marker;
pub(crate) mod json_finder;
pub(crate) mod json_object;
pub(crate) mod markers;
pub(crate) mod memo_find;
pub(crate) mod plain_args;
pub(crate) mod py_calls;
pub(crate) mod tagged_blocks;
pub(crate) mod tagged_json;
pub(crate) mod token_blocks;
pub(crate) mod xml_call;
pub(crate) mod xml_function;
pub(crate) mod xml_invoke;
