// HLSOrigin: hls-origin as a library. A Swift server app embeds a live HLS origin the way an iPhone app once
// embedded AVAssetWriter and a small HTTP server: it creates a presentation, feeds it (encoded samples through a
// `SamplePublisher`, or any input through a `Pipeline`), and mounts the origin's routes on its own Hummingbird
// router with `OriginMiddleware`. See Examples/EmbeddedOrigin.
@_exported import MediaCore
@_exported import MediaPresentation
@_exported import Origin
@_exported import Pipeline
@_exported import Producer
