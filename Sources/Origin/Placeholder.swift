// Origin module
