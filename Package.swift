// swift-tools-version:6.0
//
// HearAlert: tells a hearing-impaired person when an alert sounds, and cleans speech for their headphones.
// Read this file top to bottom as the table of contents of the package.

import PackageDescription

let package = Package(
    name: "HearAlert",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hearalert", targets: ["hearalert"]),
        .library(name: "HearAlertKit", targets: ["HearAlertKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // MARK: - Public API

        /// The library: audio I/O, DSP, detection, enhancement, output sinks, evaluation and the pipeline.
        .target(
            name: "HearAlertKit",
            dependencies: [
                "CFFTW3f", "CALSA", "CSndfile", "CSoxr", "COpenBLAS", "CAlertNet",
            ],
            exclude: ["Enhancement/README.md", "Enhancement/EXPERIMENTS.md", "Evaluation/README.md", "Formats/README.md"]
        ),

        /// The command-line tool: parses, builds a configuration, calls HearAlertKit, prints.
        .executableTarget(
            name: "hearalert",
            dependencies: [
                "HearAlertKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: - The C inference core (also builds alone with `make -C CSources/alertnet`)

        .target(name: "CAlertNet", path: "CSources/alertnet", exclude: ["Makefile", "FORMAT.md", "README.md", "tests", "fuzz"],
                sources: ["src"], publicHeadersPath: "include",
                linkerSettings: [.linkedLibrary("openblas"), .linkedLibrary("cjson"), .linkedLibrary("m")]),

        // MARK: - System libraries (Debian -dev packages; see .ci/run)

        .systemLibrary(name: "CFFTW3f", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),

        // MARK: - Benchmarks (figures printed, never asserted)

        .executableTarget(
            name: "hearalert-bench",
            dependencies: ["HearAlertKit", "CAllocationCounter"]
        ),
        /// Counts every heap allocation of the bench process (it replaces malloc by symbol interposition).
        .target(name: "CAllocationCounter"),

        // MARK: - Tests

        /// The real-time path's allocation-freedom, checked under valgrind by tools/tests/test_realtime_allocations.py:
        /// each real-time component, and the listener's own per-period code, fed frames after a warm-up.
        .executableTarget(
            name: "hearalert-realtime-probe",
            dependencies: ["HearAlertKit"]
        ),
        .testTarget(
            name: "HearAlertKitTests",
            dependencies: ["HearAlertKit"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)
