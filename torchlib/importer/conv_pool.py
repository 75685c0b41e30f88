"""conv_pool ops."""

from __future__ import annotations
