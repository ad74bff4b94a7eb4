"""The OpenAI surface: wire models, conversion, streaming, the chat service and routes."""
