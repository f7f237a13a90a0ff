// HLS module
