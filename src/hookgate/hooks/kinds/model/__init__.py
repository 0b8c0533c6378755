"""`model:` hooks: a checker model asked for a verdict (`run`), what it is asked
(`target`), the offline `scripted:` checker, and which variable is sent as its API key
(`apikey`)."""
