"""Reusable client-side checks for hls-origin's end-to-end tests and benchmarks.

Everything here works against any HLS origin (our binary, or FFmpeg's own HLS output behind nginx), so each
check can be proven able to pass and to fail independently of the product.
"""
