"""The OpenAI Agents SDK with its default model, the Responses API one, pointed at redraft: an
agent with one function tool completes the round trip (the model calls the tool, the SDK runs
it and sends the output back, the model answers), plain and streamed."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.models.openai_provider import OpenAIProvider
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from tests.e2e.conftest import API_KEY, MODEL, Fake, Server

QUESTION = "Use get_weather to tell me whether to take an umbrella in Lisbon"


def forecaster(seen: list[str]) -> Agent:
    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        seen.append(city)
        return "rain, 14 C"

    return Agent(name="forecaster", instructions="Answer with the weather.", model=MODEL,
                 tools=[get_weather])


def run_config(server: Server) -> tuple[RunConfig, AsyncOpenAI]:
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY, max_retries=0, timeout=30)
    # No use_responses argument: the provider's default model is the Responses API one.
    return RunConfig(model_provider=OpenAIProvider(openai_client=client),
                     tracing_disabled=True), client


def check_round_trip(fake: Fake, result: Any, seen: list[str]) -> None:
    assert seen == [""]  # the fake model fills the one required argument with ""
    assert result.final_output == "This is a deterministic fake reply about: " + QUESTION
    first, second = fake.bodies()[-2:]
    assert first["messages"][0] == {"role": "system", "content": "Answer with the weather."}
    assert first["tools"][0]["function"]["name"] == "get_weather"
    call = second["messages"][-2]["tool_calls"][0]
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": call["id"],
                                      "content": "rain, 14 C"}
    assert fake.chat_requests() == 2


def test_runner_completes_a_function_tool_round_trip(passthrough: Server, fake: Fake) -> None:
    seen: list[str] = []
    config, client = run_config(passthrough)
    model = config.model_provider.get_model(MODEL)
    assert isinstance(model, OpenAIResponsesModel)

    async def main() -> Any:
        try:
            return await Runner.run(forecaster(seen), QUESTION, run_config=config)
        finally:
            await client.close()

    check_round_trip(fake, asyncio.run(main()), seen)


def test_streamed_runner_completes_the_round_trip(passthrough: Server, fake: Fake) -> None:
    seen: list[str] = []
    config, client = run_config(passthrough)

    async def main() -> tuple[Any, list[str]]:
        try:
            run = Runner.run_streamed(forecaster(seen), QUESTION, run_config=config)
            kinds = [event.type async for event in run.stream_events()]
            return run, kinds
        finally:
            await client.close()

    result, kinds = asyncio.run(main())
    assert "raw_response_event" in kinds and "run_item_stream_event" in kinds
    check_round_trip(fake, result, seen)
