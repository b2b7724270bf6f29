"""The BFCC app: config, intended switch state, status and run-time tuning."""
