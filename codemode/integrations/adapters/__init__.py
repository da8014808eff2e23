"""A ``CodeMode`` as the native tool of an agent framework, one module per framework.

``pydanticai.toolset(mode)`` (a pydantic-ai toolset), ``openai_agents.function_tool(mode)``
(an OpenAI Agents SDK ``FunctionTool``), ``langchain.structured_tool(mode)`` (a LangChain
``StructuredTool``). Each is an optional extra (``codemode[pydantic-ai]``,
``codemode[openai-agents]``, ``codemode[langchain]``) and is imported only when used;
``core.CodeTool`` is what they share.
"""
