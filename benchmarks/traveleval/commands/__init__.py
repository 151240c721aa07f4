"""TravelEval's command-line commands: `data fetch|import traveleval` (`data`) and `evaluate` (`evaluate`)."""
