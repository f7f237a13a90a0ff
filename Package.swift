// swift-tools-version: 6.0
// hls-origin: a fragmented-MP4 segmenter and live HLS origin.
// Data flows one way (docs/architecture.md): input (FFmpegBridge / TestPattern) -> source and run loop (Pipeline) ->
// stages (Producer) -> Segmenter (ISOBMFF) -> events fanned out to windows (MediaPresentation) -> routes (Origin) -> HTTP.
import PackageDescription

let package = Package(
    name: "hls-origin",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hls-origin", targets: ["hls-origin"]),
        // The origin as a library: presentations, the pipeline, and routes to mount on an app's own router.
        .library(name: "HLSOrigin", targets: ["HLSOrigin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // `serve --config streams.toml|.yaml`.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // HTTP client of the push target only (serve --push): persistent connections to an ingest.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // /metrics: Prometheus text exposition (its registry directly: swift-metrics' factory gives no HELP text,
        // which promtool's lint requires; swift-metrics 2.13.0 comes with it).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C bridge: the only place FFmpeg headers are seen.
        .systemLibrary(
            name: "CFFmpeg",
            path: "Modules/CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswscale libswresample",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        // C bridge to OpenSSL's libcrypto (Debian's libssl-dev; FFmpeg's own dependencies load it already): the only
        // place its headers are seen.
        .systemLibrary(
            name: "COpenSSL",
            path: "Modules/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // AES (CBC, CTR), SHA-2, HMAC and RSA-OAEP behind a small Swift API, through libcrypto. Used by
        // ContentProtection and Origin's signed URLs.
        .target(name: "CryptoPrimitives", dependencies: ["COpenSSL"]),
        // glibc's mallopt(3) (<malloc.h>, which Swift's Glibc module leaves out): `serve`'s malloc settings.
        .systemLibrary(name: "CMalloc", path: "Modules/CMalloc"),
        // Pure value types shared by every stage (no dependencies).
        .target(name: "MediaCore"),
        // Native ISO-BMFF box writer: init segments, fragments, codec configuration records.
        .target(name: "ISOBMFF", dependencies: ["MediaCore"]),
        // Playlist models, rendering, parsing. Pure.
        .target(name: "HLS", dependencies: ["MediaCore"]),
        // MPEG-DASH manifest model and XML (no I/O).
        .target(name: "DASH", dependencies: ["MediaCore"]),
        // Presentations, renditions, URI schemes, live windows, playlist and manifest builders. HTTP-free.
        .target(name: "MediaPresentation", dependencies: ["MediaCore", "HLS", "DASH"]),
        // FFmpeg behind a small Swift API: demux, decode, convert, encode.
        .target(name: "FFmpegBridge", dependencies: ["MediaCore", "CFFmpeg"]),
        // Generated test pattern: raw frames and tone, pure Swift.
        .target(name: "TestPattern", dependencies: ["MediaCore"]),
        // Samples -> segments of fMP4 fragments.
        .target(name: "Segmenter", dependencies: ["MediaCore", "ISOBMFF"]),
        // The producer chain: format gate -> timeline supervisor (segmenters) -> segment publisher, and SamplePublisher.
        // No FFmpeg: its tests need no libav.
        .target(name: "Producer", dependencies: [
            "MediaCore", "ISOBMFF", "Segmenter", "MediaPresentation", "HLS", .product(name: "Logging", package: "swift-log"),
        ]),
        // Content protection: the encryption stage between a producer and its consumers (whole-segment AES-128, and
        // CENC cenc/cbcs sample encryption whose boxes ISOBMFF writes; keys, IVs and key periods from the timeline),
        // AES through CryptoPrimitives (libcrypto). No HTTP, no FFmpeg.
        .target(name: "ContentProtection", dependencies: [
            "MediaCore", "MediaPresentation", "ISOBMFF",
            "CryptoPrimitives",
        ]),
        // Embedded HTTP server over live snapshots.
        .target(name: "Origin", dependencies: [
            "MediaCore", "HLS", "DASH", "MediaPresentation",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdHTTP2", package: "hummingbird"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
            "CryptoPrimitives",
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        // Sources (file, pipe, pattern) -> samples, pacing, looping, transcoding decisions.
        .target(name: "Pipeline", dependencies: [
            "MediaCore", "ISOBMFF", "Segmenter", "Producer", "FFmpegBridge", "TestPattern", "HLS", "DASH", "MediaPresentation",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Push to an HTTP ingest (serve --push): PUT/POST/DELETE of what the pipeline publishes. An HTTP client,
        // no serving.
        .target(name: "Push", dependencies: [
            "MediaCore", "HLS", "MediaPresentation",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "HLSOrigin", dependencies: ["MediaCore", "MediaPresentation", "Origin", "Producer", "Pipeline"]),
        // An app embedding the library (built with the package; the e2e suite runs it).
        .executableTarget(name: "EmbeddedOriginExample", dependencies: [
            "HLSOrigin", .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Examples/EmbeddedOrigin"),
        // Typed options: one StreamOptions from the flags of `serve` and `package` and from `serve --config` (TOML or
        // YAML), its rules, and the plan of what `serve` runs. No FFmpeg: the stream names' rule is MediaPresentation's.
        .target(name: "ServeConfig", dependencies: [
            "MediaCore", "MediaPresentation",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "TOMLKit", package: "TOMLKit"), .product(name: "Yams", package: "Yams"),
        ]),
        // `--log-format json`: a swift-log handler writing one JSON object per line.
        .target(name: "LogFormats", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "hls-origin", dependencies: [
            "Pipeline", "Producer", "Origin", "HLS", "MediaCore", "MediaPresentation", "ServeConfig", "Push", "LogFormats",
            "ContentProtection", .target(name: "CMalloc", condition: .when(platforms: [.linux])),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            // `--key-server`: POSTs CPIX requests (KeyServerClient).
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ], linkerSettings: [
            // Linked by lld with packed relative relocations (DT_RELR, glibc 2.36+) and without exporting every symbol
            // to the dynamic table (nothing looks ours up by name): 3.4 MB of `.rela.dyn` and 4 MB of `.dynsym` and
            // `.dynstr` the loader no longer reads at start, ~5 MB less resident (docs/benchmarks.md, memory).
            .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                          "-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux])),
        ]),

        // Helpers shared by the test targets (seeded generator).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "MediaCoreTests", dependencies: ["MediaCore", "TestSupport"]),
        .testTarget(name: "CryptoPrimitivesTests", dependencies: ["CryptoPrimitives"]),
        .testTarget(name: "ServeConfigTests", dependencies: [
            "ServeConfig", "MediaCore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "ISOBMFFTests", dependencies: ["TestSupport", "ISOBMFF", "MediaCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HLSTests", dependencies: ["TestSupport", "HLS", "MediaCore"]),
        .testTarget(name: "DASHTests", dependencies: ["DASH", "MediaCore"]),
        .testTarget(name: "MediaPresentationTests", dependencies: ["TestSupport", "MediaPresentation", "HLS", "DASH", "MediaCore"]),
        .testTarget(name: "FFmpegBridgeTests", dependencies: ["TestSupport", "FFmpegBridge", "MediaCore", "TestPattern"]),
        .testTarget(name: "SegmenterTests", dependencies: ["TestSupport", "Segmenter", "ISOBMFF", "MediaCore"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "Producer", "MediaCore", "TestSupport"]),
        .testTarget(name: "ProducerTests", dependencies: [
            "Producer", "Segmenter", "MediaPresentation", "HLS", "MediaCore", "ISOBMFF", "TestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "PushTests", dependencies: ["Push", "MediaPresentation", "MediaCore", "HLS",
                                                      .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "LogFormatsTests", dependencies: ["LogFormats", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ContentProtectionTests", dependencies: [
            "ContentProtection", "CryptoPrimitives", "MediaPresentation", "HLS", "MediaCore", "ISOBMFF",
        ]),
        .testTarget(name: "OriginTests", dependencies: [
            "Origin", "HLS", "MediaCore", "MediaPresentation", "TestSupport", "CryptoPrimitives",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
    ]
)
