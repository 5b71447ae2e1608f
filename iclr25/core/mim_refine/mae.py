"""The bundled masked autoencoder (He et al. 2022) on lightly's timm building blocks.

Encoder: timm ViT (32 px, patch 8, dim 64, depth 8, 4 heads), wrapped by lightly's
``MaskedVisionTransformerTIMM``; decoder: lightly's ``MAEDecoderTIMM`` (1 block, dim 32) —
a light decoder, the setting in which the paper expects the last encoder blocks to take
over reconstruction work. Loss: MSE on the masked patches of per-patch normalised pixels
(mask ratio 0.75). Used by ``scripts/train_mim_refine_mae.py`` and by the experiment's
``mae_continued`` control.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class MaeConfig:
    image_size: int = 32
    patch_size: int = 8
    dim: int = 64
    depth: int = 8
    heads: int = 4
    decoder_dim: int = 32
    decoder_depth: int = 1  # light decoder (see the module docstring)
    decoder_heads: int = 4
    mask_ratio: float = 0.75

    def model_args(self) -> dict:
        """timm ``create_model`` arguments of the encoder (saved in its config.json)."""
        return {
            "img_size": self.image_size,
            "patch_size": self.patch_size,
            "embed_dim": self.dim,
            "depth": self.depth,
            "num_heads": self.heads,
            "num_classes": 0,
        }


MEAN = (0.5, 0.5, 0.5)  # pixel normalisation of the bundled model
STD = (0.25, 0.25, 0.25)


def make_vit(cfg: MaeConfig):
    import timm

    vit = timm.create_model("vit_tiny_patch16_224", pretrained=False, **cfg.model_args())
    vit.pretrained_cfg = {
        **vit.pretrained_cfg,
        "input_size": (3, cfg.image_size, cfg.image_size),
        "mean": MEAN,
        "std": STD,
        "num_classes": 0,
    }
    return vit


class MAE(nn.Module):
    """lightly's MAE recipe: encode the kept patches, decode all, predict the masked ones."""

    def __init__(self, vit, cfg: MaeConfig, fresh: bool = True) -> None:
        """``fresh``: lightly's MAE initialisation of ``vit`` (weights, fixed sin-cos
        positions), for training from scratch. ``fresh=False`` keeps ``vit``'s trained
        weights: lightly's wrapper re-initialises every weight of the ViT it wraps unless
        told to skip, which would silently restart a trained encoder from random."""
        from lightly.models.modules import MAEDecoderTIMM, MaskedVisionTransformerTIMM

        super().__init__()
        self.cfg = cfg
        init = "" if fresh else "skip"
        self.backbone = MaskedVisionTransformerTIMM(
            vit=vit,
            weight_initialization=init,
            pos_embed_initialization="sincos" if fresh else "skip",
        )
        self.sequence_length = self.backbone.sequence_length
        with warnings.catch_warnings():  # lightly 1.6 marks it deprecated (renamed in 1.7)
            warnings.simplefilter("ignore", FutureWarning)
            self.decoder = self._decoder(MAEDecoderTIMM, vit, cfg)

    @staticmethod
    def _decoder(MAEDecoderTIMM, vit, cfg):  # noqa: N803
        return MAEDecoderTIMM(
            num_patches=vit.patch_embed.num_patches,
            patch_size=cfg.patch_size,
            embed_dim=cfg.dim,
            decoder_embed_dim=cfg.decoder_dim,
            decoder_depth=cfg.decoder_depth,
            decoder_num_heads=cfg.decoder_heads,
            mlp_ratio=4.0,
            proj_drop_rate=0.0,
            attn_drop_rate=0.0,
        )

    def draw_masks(self, b: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(idx_keep, idx_mask) for ``b`` images: a random ``mask_ratio`` of the patches is
        masked (the CLS token never is), drawn from torch's global generator."""
        from lightly.models import utils

        return utils.random_token_mask(
            size=(b, self.sequence_length), mask_ratio=self.cfg.mask_ratio, device=device
        )

    def loss(self, images: torch.Tensor, masks=None) -> torch.Tensor:
        """Mean squared error of the predicted masked patches (normalised pixels); ``masks``
        from :meth:`draw_masks` (drawn here when None). Every image has the same number of
        masked patches, so the mean over a subset of rows is that subset's share of the
        batch mean (what data-parallel training relies on)."""
        from lightly.models import utils

        b = len(images)
        idx_keep, idx_mask = self.draw_masks(b, images.device) if masks is None else masks
        encoded = self.backbone.encode(images=images, idx_keep=idx_keep)  # (B, keep, D)
        decode = self.decoder.embed(encoded)
        masked = utils.repeat_token(self.decoder.mask_token, (b, self.sequence_length))
        masked = utils.set_at_index(masked, idx_keep, decode.type_as(masked))
        decoded = self.decoder.decode(masked)  # (B, N+1, d)
        pred = self.decoder.predict(utils.get_at_index(decoded, idx_mask))  # (B, M, p²·3)
        patches = utils.patchify(images, self.cfg.patch_size)  # (B, N, p²·3)
        target = utils.get_at_index(patches, idx_mask - 1)  # no CLS among the patches
        mean, var = target.mean(-1, keepdim=True), target.var(-1, keepdim=True)
        target = (target - mean) / (var + 1e-6).sqrt()  # normalised-pixel target
        return ((pred - target) ** 2).mean()


def load_mae(enc) -> MAE:
    """The bundled MAE around ``enc`` (the bundled encoder, possibly already changed), with
    the decoder trained alongside it (``mae_decoder.safetensors``)."""
    from safetensors.torch import load_file

    from iclr25.core.mim_refine.encoder import bundled_path

    cfg = MaeConfig()
    mae = MAE(enc.module, cfg, fresh=False)  # keep the (trained) encoder's weights
    state = load_file(str(bundled_path().parent / "mae_decoder.safetensors"))
    mae.decoder.load_state_dict(state)
    return mae
