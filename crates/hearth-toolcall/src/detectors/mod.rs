//! One module per wire format. `builtin()` lists them in auto-mode priority order:
//! the most specific strict formats first, generic strict ones next, loose ones last.

use std::sync::Arc;

use super::detector::Detector;

mod apriel;
mod claude_xml;
mod command_r;
mod deepseek_dsml;
mod deepseek_r1;
mod deepseek_v3;
mod deepseek_v31;
mod functionary_v32;
mod functiongemma;
mod gemma;
mod generic_xml;
mod gigachat3;
mod glm45;
mod granite;
mod granite4;
mod granite_20b_fc;
mod harmony;
mod hermes;
mod jamba;
mod json;
mod key_value;
mod kimi_k2;
mod lfm2;
mod llama31_function;
mod llama32;
mod minimax_m2;
mod mistral;
mod nemotron;
mod phi4;
mod pythonic;
mod qwen25;
mod qwen3_coder;
mod seed_oss;
pub(crate) mod shared;
mod tool_request;
mod use_tag;
mod xlam;

/// Every built-in detector, in priority order.
pub fn builtin() -> Vec<Arc<dyn Detector>> {
    vec![
        Arc::new(harmony::Harmony),
        Arc::new(deepseek_dsml::DeepseekDsml),
        Arc::new(deepseek_v31::DeepseekV31),
        Arc::new(deepseek_v3::DeepseekV3),
        Arc::new(deepseek_r1::DeepseekR1),
        Arc::new(kimi_k2::KimiK2),
        Arc::new(minimax_m2::MinimaxM2),
        Arc::new(seed_oss::SeedOss),
        Arc::new(qwen3_coder::Qwen3Coder),
        Arc::new(glm45::Glm45),
        Arc::new(qwen25::Qwen25),
        Arc::new(hermes::Hermes),
        Arc::new(granite4::Granite4),
        Arc::new(mistral::Mistral),
        Arc::new(llama32::Llama32),
        Arc::new(llama31_function::Llama31Function),
        Arc::new(functionary_v32::FunctionaryV32),
        Arc::new(phi4::Phi4),
        Arc::new(granite::Granite),
        Arc::new(granite_20b_fc::Granite20bFc),
        Arc::new(lfm2::Lfm2),
        Arc::new(gemma::Gemma),
        Arc::new(functiongemma::Functiongemma),
        Arc::new(command_r::CommandR),
        Arc::new(gigachat3::Gigachat3),
        Arc::new(apriel::Apriel),
        Arc::new(jamba::Jamba),
        Arc::new(nemotron::Nemotron),
        Arc::new(claude_xml::ClaudeXml),
        Arc::new(generic_xml::GenericXml),
        Arc::new(tool_request::ToolRequest),
        Arc::new(key_value::KeyValue),
        Arc::new(use_tag::UseTag),
        Arc::new(xlam::Xlam),
        Arc::new(pythonic::Pythonic),
        Arc::new(json::Json),
    ]
}
