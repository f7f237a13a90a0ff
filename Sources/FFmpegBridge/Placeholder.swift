// FFmpegBridge module
