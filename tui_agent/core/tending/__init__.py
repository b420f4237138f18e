"""The catalog tending itself: repeated call chains become suggestions, drift gets repairs, sprawl a doctor."""
