// Segmenter module
