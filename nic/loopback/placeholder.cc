// Replaced by the fabric twin sources.
