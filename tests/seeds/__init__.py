"""Tests that run the seed guides' code examples (../../../shared/seeds) against tapejax and TensorFlow."""
