from clawmem.cli.app import main

main()
