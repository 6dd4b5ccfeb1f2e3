"""Provider-neutral messages and stream events, the provider adapters, structured output."""
