// ISOBMFF module
