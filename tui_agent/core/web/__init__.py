"""The web: fetched pages as readable text (web_fetch) and the API's server-side web search."""
