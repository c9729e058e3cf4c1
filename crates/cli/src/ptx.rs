//! `lily ptx`: the PTX of every kernel family as the GPU backend compiles it for the full
//! model (and this process's launch shapes), one file per family. Two builds' outputs compared
//! with `scripts/profile/ptx_diff.py` tell whether a change leaves the GPU code alone, without a GPU.

use std::path::PathBuf;

use anyhow::Context;
use lily_cuda::kernels::SOURCES;
use lily_cuda::runtime::nvrtc::Nvrtc;
use lily_cuda::Dims;

#[derive(clap::Args)]
pub struct Args {
    /// Directory to write `<family>.ptx` into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let shapes = lily_cuda::shapes::current()?;
    let nvrtc = Nvrtc::get().context("NVRTC is needed (set LILY_NVRTC to libnvrtc.so.13)")?;
    let defines = Dims::qwen36_35b_a3b().defines_for(&shapes);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for (name, source) in SOURCES {
        let ptx = nvrtc.ptx(name, source, &defines)?;
        let path = args.out.join(name.replace(".cu", ".ptx"));
        std::fs::write(&path, ptx).with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(family = name, path = %path.display(), "wrote PTX");
    }
    Ok(())
}
