//! `ragscope utility --backend cpu|gpu|auto`: where the forward passes run.
//!
//! * `cpu`: the CPU engine.
//! * `gpu`: the wgpu backend on the first adapter wgpu finds (a real GPU, else a software one such
//!   as Mesa's lavapipe); no adapter, or a model the GPU path cannot run, is an error — never a
//!   silent fallback.
//! * `auto` (default): a hardware GPU when there is one, else the CPU engine (software adapters
//!   emulate a GPU on the CPU and are slower than the CPU engine); the choice is printed.
//!
//! The adapter's name, API and type go to stderr whenever the GPU is used.

use ragscope_infer::Model;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    Cpu,
    Gpu,
    #[default]
    Auto,
}

/// Sets the model's backend; returns an error message for `gpu` when it cannot be used.
pub fn attach(model: &mut Model, choice: BackendChoice, cpu_fallback: bool) -> Result<(), String> {
    match choice {
        BackendChoice::Cpu => Ok(()),
        BackendChoice::Gpu | BackendChoice::Auto => attach_gpu(model, choice, cpu_fallback),
    }
}

#[cfg(feature = "gpu")]
fn attach_gpu(model: &mut Model, choice: BackendChoice, cpu_fallback: bool) -> Result<(), String> {
    use ragscope_infer::gpu::{GpuBackend, GpuPolicy};
    let policy = if cpu_fallback {
        GpuPolicy::CpuFallback
    } else {
        GpuPolicy::GpuOnly
    };
    let auto = choice == BackendChoice::Auto;
    if auto {
        // Probe first so a software adapter is not given the weights for nothing.
        match ragscope_infer::gpu::GpuContext::probe_blocking() {
            Ok(summary) if summary.is_cpu() => {
                eprintln!(
                    "ragscope: backend auto: CPU engine (the only GPU adapter, {summary}, is a software emulation; --backend gpu uses it anyway)"
                );
                return Ok(());
            }
            Ok(_) => {}
            Err(ragscope_infer::gpu::GpuError::NoAdapter(_)) => {
                eprintln!("ragscope: backend auto: CPU engine (no GPU adapter found)");
                return Ok(());
            }
            Err(e) => {
                eprintln!("ragscope: backend auto: CPU engine ({e})");
                return Ok(());
            }
        }
    }
    match GpuBackend::new(model, policy) {
        Ok(b) => {
            eprintln!("ragscope: GPU backend on {}", b.adapter());
            model.set_backend(Some(Box::new(b)));
            Ok(())
        }
        Err(e) if auto => {
            eprintln!("ragscope: backend auto: CPU engine ({e})");
            Ok(())
        }
        Err(e) => Err(format!("--backend gpu: {e}")),
    }
}

#[cfg(not(feature = "gpu"))]
fn attach_gpu(
    _model: &mut Model,
    choice: BackendChoice,
    _cpu_fallback: bool,
) -> Result<(), String> {
    match choice {
        BackendChoice::Gpu => Err(
            "--backend gpu: this ragscope was built without the GPU backend (cargo feature `gpu`)"
                .into(),
        ),
        _ => Ok(()),
    }
}
