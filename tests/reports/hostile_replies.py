"""A mock-server reply function whose every answer is an HTML/JS injection attempt (model output is untrusted)."""

from __future__ import annotations

from typing import Any

PAYLOAD = ('<script>document.title="pwned"</script><img src=x onerror="document.body.dataset.pwned=1">'
           '" onmouseover="alert(1)')


def reply(request: Any) -> str:
    return f"Thought: {PAYLOAD}"
