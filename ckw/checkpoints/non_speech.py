"""openai-whisper's non-speech tokens (`Tokenizer.non_speech_tokens`), derived from a vocabulary
through its encoder: the runtime suppresses them while decoding, and the converter of a checkpoint
without a decoding config (openai-whisper's `.pt`) writes them as its `suppress_tokens`.
"""

from typing import Callable, List


def non_speech_tokens(encode: Callable[[str], List[int]]) -> List[int]:
    """Speaker tags, brackets and music symbols (alone or after a space), plus " -" and " '"
    (allowed inside words, not at their start), as openai-whisper derives them. Basic punctuation
    stays allowed."""
    symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
    symbols += "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
    # U+2640..U+267F: several tokens in some vocabularies; the first is safe to suppress.
    miscellaneous = set("♩♪♫♬♭♮♯")
    result = {encode(" -")[0], encode(" '")[0]}
    for symbol in symbols + sorted(miscellaneous):
        for ids in (encode(symbol), encode(" " + symbol)):
            if len(ids) == 1 or symbol in miscellaneous:
                result.add(ids[0])
    return sorted(result)
