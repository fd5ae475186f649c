#!/usr/bin/env python3
"""Reference renderings of the chat templates einfer-run recognises (tests/test_chat.cpp).

The templates are the Jinja chat_template strings of the four common families as model repos ship
them in tokenizer_config.json (ChatML: Qwen/SmolLM-Instruct style; Llama 2 chat; Llama 3 instruct;
Zephyr). Each is rendered with Jinja2 (the engine Hugging Face transformers' apply_chat_template
uses) over a few conversations, with and without a system message and a generation prompt.
einfer never runs Jinja: it recognises the family and formats turns itself; the test checks that
its formatting equals these renderings byte for byte.

    python3 tests/gen/gen_chat_templates.py   # writes tests/data/chat/templates.json
"""
import json
import os

import jinja2

TEMPLATES = {
    "chatml": (
        "{% for message in messages %}"
        "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "llama2": (
        "{% if messages[0]['role'] == 'system' %}"
        "{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}"
        "{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}"
        "{% for message in loop_messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
        "{% endif %}"
        "{% if loop.index0 == 0 and system_message != false %}"
        "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
        "{% else %}{% set content = message['content'] %}{% endif %}"
        "{% if message['role'] == 'user' %}"
        "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}"
        "{{ ' '  + content.strip() + ' ' + eos_token }}"
        "{% endif %}{% endfor %}"
    ),
    "llama3": (
        "{% set loop_messages = messages %}"
        "{% for message in loop_messages %}"
        "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
        " + message['content'] | trim + '<|eot_id|>' %}"
        "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
        "{{ content }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
    ),
    "zephyr": (
        "{% for message in messages %}\n"
        "{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n"
        "{% endif %}\n"
        "{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n"
        "{% endfor %}"
    ),
}
TOKENS = {
    "chatml": ("<s>", "</s>"),
    "llama2": ("<s>", "</s>"),
    "llama3": ("<|begin_of_text|>", "<|end_of_text|>"),
    "zephyr": ("<s>", "</s>"),
}
CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour."}],
    [
        {"role": "system", "content": "You are a robot."},
        {"role": "user", "content": "Who are you?"},
        {"role": "assistant", "content": "A robot."},
        {"role": "user", "content": "Why?\nTell me."},
    ],
    [
        {"role": "user", "content": "One"},
        {"role": "assistant", "content": "Two"},
        {"role": "user", "content": "Three"},
        {"role": "assistant", "content": "Four"},
    ],
]


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def main():
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)  # as transformers configures it
    env.globals["raise_exception"] = raise_exception
    cases = []
    for name, source in TEMPLATES.items():
        template = env.from_string(source)
        bos, eos = TOKENS[name]
        for conversation in CONVERSATIONS:
            for add_generation_prompt in (False, True):
                if add_generation_prompt and conversation[-1]["role"] != "user":
                    continue
                text = template.render(messages=conversation, bos_token=bos, eos_token=eos,
                                       add_generation_prompt=add_generation_prompt)
                cases.append({"format": name, "messages": conversation, "bos": bos, "eos": eos,
                              "add_generation_prompt": add_generation_prompt, "text": text})
    out = {"templates": TEMPLATES, "cases": cases}
    path = os.path.join(os.path.dirname(__file__), "..", "data", "chat", "templates.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(cases)} renderings -> {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
