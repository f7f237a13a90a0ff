// TestPattern module
