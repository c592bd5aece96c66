from specswarm.cli import main

main()
