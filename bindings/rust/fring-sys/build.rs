// SPDX-License-Identifier: MIT
//! Generates the bindings from the C header, so they can never drift from
//! it. FRING_INCLUDE_DIR names an installed include directory (the one
//! holding fring/plugin.h); the default is this repository's abi/include.
use std::env;
use std::path::PathBuf;

fn main() {
    let inc = env::var("FRING_INCLUDE_DIR").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../abi/include")
    });
    let header = inc.join("fring/plugin.h");
    println!("cargo:rerun-if-env-changed=FRING_INCLUDE_DIR");
    println!("cargo:rerun-if-changed={}", header.display());
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", inc.display()))
        .allowlist_type("fring_.*")
        .allowlist_var("FRING_.*")
        .derive_default(true)
        .derive_debug(false)
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on {}: {e}", header.display()));
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
