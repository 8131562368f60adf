"""What the demo's applications say: the questions, answers, knowledge-base articles, the tool
each support question needs, the files and actions of the coding agent. Kept together so that
each trace's question, documents, tool calls and answer agree."""

from __future__ import annotations

from typing import Any

SUPPORT_QUESTIONS = (
    "Where is my order #48213?",
    "How do I reset my password?",
    "Can I return shoes after 30 days?",
    "Do you ship to Norway?",
    "My discount code SAVE20 doesn't work",
    "I was charged twice for the same order",
)
# The support chatbot's conversations: each opens with a greeting and its answer, which lead
# to any of its questions, asked in this order (every support question belongs to one story),
# so that a session, read whole, is one customer's one conversation.
SUPPORT_STORIES: tuple[tuple[tuple[str, str], tuple[str, ...]], ...] = (
    (
        (
            "Hi, I ordered running shoes last week.",
            "Thanks for writing! How can I help with your order?",
        ),
        ("Where is my order #48213?", "Can I return shoes after 30 days?"),
    ),
    (
        (
            "Hello, I'd like to order a winter jacket.",
            "Happy to help: what would you like to know before you order?",
        ),
        ("Do you ship to Norway?", "My discount code SAVE20 doesn't work"),
    ),
    (
        ("Hi, something is wrong with my account.", "Sorry to hear that: what happened?"),
        ("How do I reset my password?", "I was charged twice for the same order"),
    ),
)
DOCS_QUESTIONS = (
    "How do I configure SSO with Okta?",
    "What is the rate limit of the public API?",
    "How do I rotate an API key?",
    "Why is my webhook returning 401?",
)
QUESTIONS = SUPPORT_QUESTIONS + DOCS_QUESTIONS
# What the apps answer each question.
ANSWERS = {
    "Where is my order #48213?": "Your order shipped yesterday and should arrive within 2 "
    "business days.",
    "How do I reset my password?": "Use 'Forgot password' on the sign-in page; the link in the "
    "email is valid for one hour.",
    "Can I return shoes after 30 days?": "Yes: unworn items can be returned for free within 60 "
    "days, from the order page.",
    "Do you ship to Norway?": "Yes, we ship to Norway; delivery takes 3-5 business days.",
    "My discount code SAVE20 doesn't work": "SAVE20 expired on Friday, and codes cannot be "
    "combined; WINTER15 is valid until the end of the month.",
    "I was charged twice for the same order": "Sorry about that: the second charge was a "
    "duplicate, so I have refunded it; the refund reaches your card in 5-7 business days.",
    "How do I configure SSO with Okta?": "Add tracetui as a SAML 2.0 app in Okta, paste its "
    "metadata URL under Settings -> Security, then map the email attribute [1].",
    "What is the rate limit of the public API?": "1,000 requests per minute per key; a 429 "
    "says how long to wait in Retry-After [1].",
    "How do I rotate an API key?": "Go to Settings -> API keys, create a new key, deploy it, "
    "then revoke the old one [1].",
    "Why is my webhook returning 401?": "Your endpoint is probably checking the signature with "
    "an old signing secret; copy the current one from the alert [1].",
}
# The support bot's knowledge base articles (the content its search returns).
KB_ARTICLES = (
    "Orders ship within one business day; tracking links are emailed when the parcel leaves.",
    "Returns are free within 60 days for unworn items; start one from the order page.",
    "Discount codes cannot be combined, and expire at midnight UTC on their end date.",
    "We ship to the EU, Norway, Switzerland and the UK; delivery takes 3-5 business days.",
    "A password reset link is valid for one hour; check the spam folder if it does not come.",
    "A duplicate charge is refunded in full to the card it came from within 5-7 business days.",
)
# Per support question: its intent, the article that answers it, and the tool the assistant
# calls first (name, arguments, result), if any.
SUPPORT_CASES: dict[str, tuple[str, int, tuple[str, dict[str, Any], str] | None]] = {
    "Where is my order #48213?": (
        "order",
        0,
        (
            "orders.lookup",
            {"order_id": 48213},
            '{"status": "shipped", "carrier": "DHL", "eta": "2 business days"}',
        ),
    ),
    "How do I reset my password?": ("other", 4, None),
    "Can I return shoes after 30 days?": ("returns", 1, None),
    "Do you ship to Norway?": ("shipping", 3, None),
    "My discount code SAVE20 doesn't work": (
        "billing",
        2,
        (
            "promotions.check_code",
            {"code": "SAVE20"},
            '{"valid": false, "reason": "expired", "alternative": "WINTER15"}',
        ),
    ),
    "I was charged twice for the same order": (
        "billing",
        5,
        (
            "payments.refund",
            {"order_id": 51877, "reason": "duplicate charge"},
            '{"refund_id": "re_51877_2", "status": "pending", "amount": "49.00 EUR"}',
        ),
    ),
}
FILES = (
    "src/billing/invoice.py",
    "src/api/routes.py",
    "tests/test_invoice.py",
    "src/core/retry.py",
    "pyproject.toml",
)


# The coding agent's actions: what its plan says, and what each tool answers.
AGENT_ACTIONS = {
    "read_file": ("Read {path} to see what the failing test expects.", "(file contents, 84 lines)"),
    "grep": ("Search the repository for the function under test.", "3 matches in {path}"),
    "run_tests": ("Run the failing test to see its error.", "1 failed, 41 passed"),
    "apply_patch": ("Patch {path}: round half up before summing.", "patch applied to {path}"),
}
