// Pipeline module
