"""scabench: SCA component pipelines over omniORB, measured."""
