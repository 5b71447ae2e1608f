"""style-check: which artists have a recognisable style, and which generated images copy it.

The usable version of ArtSavant (Moayeri et al., *Rethinking Artistic Copyright
Infringements in the Era of Text-to-Image Generative Models*, ICLR 2025) on a user's own
reference corpus. One concern per module:

- ``synthetic``   procedural "artists" for tests and the demo
- ``imageio``     safe image loading (decompression bombs, corrupt and truncated files)
- ``corpus``      listing reference works (folders or a CSV manifest) and generated images
- ``encoders``    the default style-statistics encoder and ``hf:PATH`` vision models
- ``store``       the SQLite embedding DB;  ``index``  incremental indexing into it
- ``space``       the embedding space (standardisation, group balance, unit norm)
- ``deepmatch``   DeepMatch: linear probe + k-NN, per-artist held-out accuracy
- ``tags``        tags per image (binned attributes; CLIP zero-shot vocabulary)
- ``tagmatch``    TagMatch: greedy smallest distinguishing tag combination per artist
- ``check``       attribution of generated images, style-at-risk share
- ``report``      HTML report and PNG contact sheet
- ``pipeline``    the end-to-end functions the CLI calls

A match measures visual resemblance to an artist's works, not legal infringement.
"""

DISCLAIMER = (
    "A match measures visual resemblance to an artist's works under the chosen encoder; "
    "it is not a finding of copying or of legal infringement."
)
